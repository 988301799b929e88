-- CreateTable
CREATE TABLE "ClusterInstance" (
    "id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "maxSessions" INTEGER NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeatAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ClusterInstance_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BotSession_instanceId_status_idx" ON "BotSession"("instanceId", "status");
