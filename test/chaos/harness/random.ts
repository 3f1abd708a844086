import { seed } from "./seed.js";

/** A small seeded generator (mulberry32), so choices such as when to kill repeat from run to run. */
export function seededRandom(salt = 0) {
  let state = (seed + salt) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
