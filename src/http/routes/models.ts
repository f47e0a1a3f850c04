import { Router } from "express";
import { MODES } from "../../config/config.js";
import { NotFoundError } from "../../errors/adapter-error.js";
import type { Model } from "../../openai/chat-completion.js";
import { bearerCredential } from "../request-context.js";

/** `GET /v1/models` and `/v1/models/{id}`: the interaction modes as models, so UIs can offer them. */
export function modelsRouter(options: { created: number }): Router {
  const models: Model[] = MODES.map((mode) => ({
    id: mode,
    object: "model",
    created: options.created,
    owned_by: "workspace",
  }));
  const router = Router();
  router.get("/v1/models", (request, response) => {
    bearerCredential(request);
    response.json({ object: "list", data: models });
  });
  router.get("/v1/models/:id", (request, response) => {
    bearerCredential(request);
    const model = models.find((candidate) => candidate.id === request.params.id);
    if (!model)
      throw new NotFoundError(`The model '${request.params.id}' does not exist`, {
        param: "model",
        code: "model_not_found",
      });
    response.json(model);
  });
  return router;
}
