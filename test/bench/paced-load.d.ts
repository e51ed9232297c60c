/** One request of a paced load. */
export interface PacedRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string
}

/** What a paced load measured. */
export interface PacedFigures {
  requests_per_s: number
  p50_ms: number
  p99_ms: number
  non_2xx: number
  errors: number
  total: number
  client_cpu_share: number
}

/** Offers `rate` requests per second over `connections` keep-alive connections for `durationSeconds`. */
export function runPacedLoad(options: {
  url: string
  rate: number
  durationSeconds: number
  connections: number
  nextRequest(worker: number): PacedRequest
}): Promise<PacedFigures>
