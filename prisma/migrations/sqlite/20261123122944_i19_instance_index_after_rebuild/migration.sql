-- The i15 BotSession rebuild (recordingBytes BIGINT) ran after i19 created this index and dropped it.
-- CreateIndex
CREATE INDEX "BotSession_instanceId_status_idx" ON "BotSession"("instanceId", "status");
