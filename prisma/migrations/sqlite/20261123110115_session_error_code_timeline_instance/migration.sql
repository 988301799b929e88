-- AlterTable
ALTER TABLE "BotSession" ADD COLUMN "errorCode" TEXT;
ALTER TABLE "BotSession" ADD COLUMN "instanceId" TEXT;
ALTER TABLE "BotSession" ADD COLUMN "timelineFile" TEXT;
