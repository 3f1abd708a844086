import { router } from "../../trpc/init.js";
import { v1CarsRouter } from "./routers/v1/cars.js";
import { v1CoeRouter } from "./routers/v1/coe.js";
import { v1PqpRouter } from "./routers/v1/pqp.js";
import { v2CarsRouter } from "./routers/v2/cars.js";
import { v2CoeRouter } from "./routers/v2/coe.js";
import { v2PqpRouter } from "./routers/v2/pqp.js";

/**
 * The versioned data groups (SPEC §8), one procedure per versioned REST
 * operation: `data.v1.cars.list` is GET /v1/cars. Both versions call the same
 * services; a version only names fields and shapes the envelope.
 */
export const dataRouter = router({
  v1: router({ cars: v1CarsRouter, coe: v1CoeRouter, pqp: v1PqpRouter }),
  v2: router({ cars: v2CarsRouter, coe: v2CoeRouter, pqp: v2PqpRouter }),
});
