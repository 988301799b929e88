-- AlterTable
ALTER TABLE "ClusterInstance" ADD COLUMN     "diskRoom" BOOLEAN NOT NULL DEFAULT true;
