/**
 * Whether a prompt may ask for a missing value: both stdin and stdout are terminals, and this is
 * not a CI job. A CI runner or container can give a terminal nobody types at (`docker run -t`
 * without `-i`, some runners' allocated tty); there a prompt waited for ever. `CI` set to anything
 * but `false` or `0` (as GitHub Actions, GitLab, CircleCI, Buildkite and others set it) counts.
 */
export function canPrompt(env: NodeJS.ProcessEnv = process.env): boolean {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return false
  const ci = env.CI?.trim().toLowerCase()
  return ci === undefined || ci === '' || ci === 'false' || ci === '0'
}
