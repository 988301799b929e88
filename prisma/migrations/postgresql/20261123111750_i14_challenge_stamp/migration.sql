-- AlterTable
ALTER TABLE "TwoFactorChallenge" ADD COLUMN     "securityStamp" TEXT;
