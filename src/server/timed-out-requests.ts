/**
 * Ties a 408 written straight on a connection (the request did not arrive in time: Node's check,
 * or the idle cut) to the request h3 is handling there, so that the client's answer and serve's
 * line for it carry the same request_id and status: the line said 400 with another id, as if the
 * client had hung up.
 */

/** The id of the request being handled on each connection. */
const handling = new WeakMap<object, string>()
/** Connections whose request was answered 408 on the socket, with that answer's message. */
const timedOut = new WeakMap<object, string>()

/** Notes that the request REQUEST_ID is being handled on SOCKET. */
export function noteHandledRequest(socket: object | undefined, requestId: string): void {
  if (socket) handling.set(socket, requestId)
}

/** Ends the note once the request is answered, so a later 408 on the kept-alive connection is not taken for it. */
export function forgetHandledRequest(socket: object | undefined, requestId: string): void {
  if (socket && handling.get(socket) === requestId) handling.delete(socket)
}

/** Marks SOCKET's request as answered 408 with MESSAGE; returns the id to answer with, the handled request's if any. */
export function markRequestTimedOut(socket: object, message: string): string | undefined {
  timedOut.set(socket, message)
  return handling.get(socket)
}

/** The 408's message when the request on SOCKET was answered so: its body will not come. */
export function findTimeoutMessage(socket: object | undefined): string | undefined {
  return socket ? timedOut.get(socket) : undefined
}
