-- AlterTable
ALTER TABLE "BotSession" ALTER COLUMN "recordingBytes" SET DATA TYPE BIGINT;
