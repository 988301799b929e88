-- CreateTable
CREATE TABLE "ClusterInstance" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "url" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "maxSessions" INTEGER NOT NULL,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeatAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "BotSession_instanceId_status_idx" ON "BotSession"("instanceId", "status");
