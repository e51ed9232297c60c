/** A secret as the API previews it (`whsec_...abcd`) or the reports mask it (`whsec_****abcd`): never one that signs. */
const SHOWN_SECRET = /^whsec_(?:\.{3}|\*{4})[^.*]{1,4}$/

/** Whether TEXT (spaces around it aside) is a secret's preview rather than a secret. */
export function isSecretPreview(text: string): boolean {
  return SHOWN_SECRET.test(text.trim())
}
