-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_BotSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "meetingUrl" TEXT NOT NULL,
    "reference" TEXT,
    "activeReference" TEXT,
    "displayName" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "record" BOOLEAN NOT NULL,
    "recordingFile" TEXT,
    "errorMessage" TEXT,
    "errorCode" TEXT,
    "endReason" TEXT,
    "recordingFormat" TEXT NOT NULL,
    "recordingBytes" BIGINT,
    "participantCount" INTEGER,
    "timelineFile" TEXT,
    "instanceId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "joinedAt" DATETIME,
    "endedAt" DATETIME,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_BotSession" ("activeReference", "createdAt", "displayName", "endReason", "endedAt", "errorCode", "errorMessage", "id", "instanceId", "joinedAt", "meetingUrl", "participantCount", "record", "recordingBytes", "recordingFile", "recordingFormat", "reference", "status", "timelineFile", "updatedAt") SELECT "activeReference", "createdAt", "displayName", "endReason", "endedAt", "errorCode", "errorMessage", "id", "instanceId", "joinedAt", "meetingUrl", "participantCount", "record", "recordingBytes", "recordingFile", "recordingFormat", "reference", "status", "timelineFile", "updatedAt" FROM "BotSession";
DROP TABLE "BotSession";
ALTER TABLE "new_BotSession" RENAME TO "BotSession";
CREATE UNIQUE INDEX "BotSession_activeReference_key" ON "BotSession"("activeReference");
CREATE INDEX "BotSession_reference_idx" ON "BotSession"("reference");
CREATE INDEX "BotSession_status_idx" ON "BotSession"("status");
CREATE INDEX "BotSession_createdAt_idx" ON "BotSession"("createdAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
