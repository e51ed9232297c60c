// As a partner's Jest project has it: the sandbox starts once for the whole run, in globalSetup,
// which Jest loads with Node's own loader, so the ES-module package root works there.
module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/*.test.cjs'],
  globalSetup: '<rootDir>/sandbox-setup.mjs',
  globalTeardown: '<rootDir>/sandbox-teardown.mjs',
}
