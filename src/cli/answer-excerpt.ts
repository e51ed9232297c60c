import { clipText } from '../text/clip-text.js'
import { escapeControls } from '../text/escape-controls.js'

/** The most of an answer a line shows: a framework's error message, not its whole page. */
const SHOWN_CHARS = 300

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&#39;': '\'', '&nbsp;': ' ' }

/**
 * A receiver's answer body on one line, for `webhook verify`'s line of a case that failed, or
 * undefined when it is empty. A framework that logs nothing (Fastify by default) puts its error
 * there, and an HTML error page (Express's) keeps its message once the tags are dropped.
 */
export function showAnswerExcerpt(answer: string | null): string | undefined {
  if (!answer) return undefined
  const text = answer.trimStart().startsWith('<') ? answer.replace(/<[^>]*>/g, ' ').replace(/&(?:lt|gt|amp|quot|#39|nbsp);/g, (entity) => ENTITIES[entity]!) : answer
  const line = escapeControls(text.replace(/\s+/g, ' ').trim())
  return line === '' ? undefined : clipText(line, SHOWN_CHARS)
}
