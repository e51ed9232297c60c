import type { Command } from 'commander'
import { printJsonDocument, printErrorsAsJson } from '../../cli-error.js'
import { escapeControls } from '../../../text/escape-controls.js'
import { addJsonOption, addKeysFileOption, resolveKeysFile } from '../../options.js'

async function runList(flags: { keys?: string; json?: boolean }, command: Command): Promise<void> {
  const { readKeysFile, describeKeyStatus } = await import('../../../keys/keys-file.js')
  const { maskApiKey } = await import('../../../keys/api-key-text.js')
  const { chalk } = await import('../../output.js')
  const path = resolveKeysFile(flags.keys)
  const file = await readKeysFile(path)
  const now = new Date()
  const rows = file.keys.map((record) => ({
    key: maskApiKey(record.key),
    label: record.label,
    status: describeKeyStatus(record, now),
    created_at: record.created_at,
    expires_at: record.expires_at,
  }))
  if (flags.json) {
    printJsonDocument(command, rows, 2)
    return
  }
  if (rows.length === 0) {
    process.stdout.write(`no keys in ${path}; create one with "sandbox keys create"\n`)
    return
  }
  // Times shown in UTC, marked Z: without the mark a reader east or west of UTC took them for
  // local. Converted, not cut: a hand-written +09:00 time lost its offset and showed 9 hours late.
  const showTime = (iso: string) => `${new Date(Date.parse(iso)).toISOString().slice(0, 19)}Z`
  const table = [['KEY', 'LABEL', 'STATUS', 'CREATED', 'EXPIRES'], ...rows.map((row) => [row.key, row.label == null ? '-' : escapeControls(row.label), row.status, showTime(row.created_at), row.expires_at ? showTime(row.expires_at) : '-'])]
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)))
  for (const [index, row] of table.entries()) {
    const line = row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()
    process.stdout.write(`${index === 0 ? chalk.bold(line) : line}\n`)
  }
}

/** `sandbox keys list`. */
export function registerKeysList(keys: Command): void {
  const command = keys.command('list').description('list registered keys (masked) with their status')
  addJsonOption(addKeysFileOption(printErrorsAsJson(command)), 'print JSON instead of text (an error: {"error": {"code", "message"}})')
    .action((flags: { keys?: string; json?: boolean }) => runList(flags, command))
}
