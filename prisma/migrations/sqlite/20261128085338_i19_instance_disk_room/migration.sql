-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ClusterInstance" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "url" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "maxSessions" INTEGER NOT NULL,
    "diskRoom" BOOLEAN NOT NULL DEFAULT true,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeatAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO "new_ClusterInstance" ("heartbeatAt", "id", "maxSessions", "startedAt", "state", "url") SELECT "heartbeatAt", "id", "maxSessions", "startedAt", "state", "url" FROM "ClusterInstance";
DROP TABLE "ClusterInstance";
ALTER TABLE "new_ClusterInstance" RENAME TO "ClusterInstance";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
