/**
 * The shortest `serve --forget-idle-keys` takes: a CI run that waits on a retried webhook must keep
 * its key. A module of its own: the CLI checks the flag without loading the sweep and the server
 * modules it imports, which serve then loaded ahead of the rest of the server.
 */
export const MIN_FORGET_IDLE_MS = 60 * 60 * 1000
