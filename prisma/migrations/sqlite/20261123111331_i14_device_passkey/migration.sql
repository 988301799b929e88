-- AlterTable
ALTER TABLE "TrustedDevice" ADD COLUMN "passkeyId" TEXT;
