-- AlterTable
ALTER TABLE "BotSession" ADD COLUMN "automaticLeave" TEXT;
