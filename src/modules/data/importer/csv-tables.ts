import { count, label, make, month, vehicleType, wholeNumber } from "./cleaning.js";

/**
 * What the importer knows about each published file: its name, the table it
 * fills, the cleaning rule of each column (CSV header names are the table's
 * column names) and the natural key that makes a re-import an update.
 */
export interface CsvTable {
  file: string;
  table: string;
  columns: Record<string, (raw: string) => string | number>;
  key: readonly string[];
}

export const carsCsv: CsvTable = {
  file: "cars.csv",
  table: "car_registrations",
  columns: { month, make, fuel_type: label, vehicle_type: vehicleType, number: count },
  key: ["month", "make", "fuel_type", "vehicle_type"],
};

export const coeCsv: CsvTable = {
  file: "coe.csv",
  table: "coe_results",
  columns: {
    month,
    bidding_no: wholeNumber,
    vehicle_class: label,
    quota: count,
    bids_success: count,
    bids_received: count,
    premium: wholeNumber,
  },
  key: ["month", "bidding_no", "vehicle_class"],
};

export const pqpCsv: CsvTable = {
  file: "pqp.csv",
  table: "quota_premiums",
  columns: { month, vehicle_class: label, pqp: wholeNumber },
  key: ["month", "vehicle_class"],
};

export const csvTables = [carsCsv, coeCsv, pqpCsv] as const;
