import type { H3, H3Event } from 'h3'
import { ApiError } from './api-error.js'
import { answerWithoutRoute } from './pipeline.js'
import type { SandboxServices } from './services.js'

/** 405 METHOD_NOT_ALLOWED with `Allow` for the methods of `path` that have no route, naming the path asked for (not its `:id` pattern). */
export function refuseOtherMethods(app: H3, path: string, methods: string[], services: SandboxServices): void {
  const allow = methods.join(', ')
  app.all(path, (event: H3Event) => answerWithoutRoute(event,
    new ApiError('METHOD_NOT_ALLOWED', `${event.req.method} is not allowed on ${event.url.pathname}; use ${allow}.`, { allowed_methods: methods }, { allow }), services))
}
