/** The fuzzer's seed: fixed, so every run sends the same requests, unless CHAOS_SEED names another. */
export const seed = Number(process.env.CHAOS_SEED ?? 20261126);
