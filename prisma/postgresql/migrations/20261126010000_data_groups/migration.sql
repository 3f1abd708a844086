-- CreateTable
CREATE TABLE "car_registrations" (
    "month" TEXT NOT NULL,
    "make" TEXT NOT NULL,
    "fuel_type" TEXT NOT NULL,
    "vehicle_type" TEXT NOT NULL,
    "number" INTEGER NOT NULL,

    CONSTRAINT "car_registrations_pkey" PRIMARY KEY ("month","make","fuel_type","vehicle_type")
);

-- CreateTable
CREATE TABLE "coe_results" (
    "month" TEXT NOT NULL,
    "bidding_no" INTEGER NOT NULL,
    "vehicle_class" TEXT NOT NULL,
    "quota" INTEGER NOT NULL,
    "bids_success" INTEGER NOT NULL,
    "bids_received" INTEGER NOT NULL,
    "premium" INTEGER NOT NULL,

    CONSTRAINT "coe_results_pkey" PRIMARY KEY ("month","bidding_no","vehicle_class")
);

-- CreateTable
CREATE TABLE "quota_premiums" (
    "month" TEXT NOT NULL,
    "vehicle_class" TEXT NOT NULL,
    "pqp" INTEGER NOT NULL,

    CONSTRAINT "quota_premiums_pkey" PRIMARY KEY ("month","vehicle_class")
);

-- CreateIndex
CREATE INDEX "car_registrations_make_month_idx" ON "car_registrations"("make", "month");

-- CreateIndex
CREATE INDEX "coe_results_vehicle_class_month_idx" ON "coe_results"("vehicle_class", "month");

-- CreateIndex
CREATE INDEX "quota_premiums_vehicle_class_month_idx" ON "quota_premiums"("vehicle_class", "month");

