-- AlterTable
ALTER TABLE "tasks" ADD COLUMN "lease_duration_seconds" INTEGER;

-- Leases taken before this column existed: the term they were taken with.
UPDATE "tasks" SET "lease_duration_seconds" = LEAST(3600, GREATEST(5,
  ROUND(EXTRACT(EPOCH FROM ("lease_expires_at" - "lease_created_at")))::INTEGER))
WHERE "lease_id" IS NOT NULL;
