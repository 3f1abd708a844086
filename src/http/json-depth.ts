import type { RequestHandler } from "express";
import { nestedDeeperThan } from "../schemas/json.js";
import { validationResponse } from "./error-response.js";

/**
 * Both tRPC adapters serialise the parsed body again with JSON.stringify,
 * which overflows the stack on a body nested a few thousand levels deep (a
 * 500). No field of this API needs more than this, so deeper bodies are a 400
 * before they reach the adapters.
 */
export const maxBodyDepth = 256;

export const limitJsonDepth: RequestHandler = (req, res, next) => {
  if (!nestedDeeperThan(req.body, maxBodyDepth)) return next();
  const { status, body } = validationResponse([
    { field: "body", message: `must not be nested more than ${maxBodyDepth} levels deep` },
  ]);
  res.status(status).json(body);
};
