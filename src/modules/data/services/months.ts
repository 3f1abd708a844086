/** `shiftMonth("2021-01", -1)` → `"2020-12"`; months are "YYYY-MM". */
export function shiftMonth(month: string, by: number): string {
  const [year, monthOfYear] = month.split("-").map(Number) as [number, number];
  const index = year * 12 + (monthOfYear - 1) + by;
  return `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;
}
