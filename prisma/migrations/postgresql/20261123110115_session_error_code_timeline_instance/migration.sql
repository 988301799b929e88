-- AlterTable
ALTER TABLE "BotSession" ADD COLUMN     "errorCode" TEXT,
ADD COLUMN     "instanceId" TEXT,
ADD COLUMN     "timelineFile" TEXT;
