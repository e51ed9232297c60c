import type { ScenarioStep } from './scenario-schema.js'

/** A step's name in reports: its own, or what it does (method, path and flow action; webhook type). */
export function describeStep(step: ScenarioStep, index: number): string {
  if (step.name) return step.name
  if ('request' in step) {
    const action = (step.request.body as { action?: unknown } | undefined)?.action
    return `${step.request.method} ${step.request.path}${typeof action === 'string' ? ` ${action}` : ''}`
  }
  if ('replay' in step) return 'replay the previous request'
  if ('wait_for_webhook' in step) return `webhook ${step.wait_for_webhook.type}`
  return `recover the ${step.recover.flow} flow from GET state`
}
