// A Jest project on ES modules (NODE_OPTIONS=--experimental-vm-modules, no transform): its test
// files import the package root too, and run a sandbox in-process.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/*.test.mjs'],
  transform: {},
}
