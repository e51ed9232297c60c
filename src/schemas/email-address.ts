/**
 * An email address as the partner profile takes it. Zod's default pattern is ASCII with a
 * letters-only top-level domain, so it refused every address on an internationalized domain,
 * even in its ASCII form (`info@xn--e1afmkfd.xn--p1ai`, which is `info@пример.рф`), while it
 * took a label ending in a hyphen. Here: dot-separated local part of letters (any script),
 * digits and `_'+-`; domain labels of letters, digits and inner hyphens; a top-level domain of
 * two or more letters, or an `xn--` one. The `u` flag makes `\p{...}` the Unicode classes.
 */
export const EMAIL_PATTERN = /^(?!\.)(?!.*\.\.)[\p{L}\p{M}\p{N}_'+\-.]*[\p{L}\p{M}\p{N}_+\-]@(?:[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}\-]*[\p{L}\p{M}\p{N}])?\.)+(?:\p{L}[\p{L}\p{M}]+|xn--[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)$/u
