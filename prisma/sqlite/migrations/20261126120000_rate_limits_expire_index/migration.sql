-- CreateIndex
CREATE INDEX "rate_limits_expire_idx" ON "rate_limits"("expire");

