// jest's globalTeardown (jest.config.cjs): loaded outside jest's resolver, so the import names no extension.
export { checkRun as default } from './run-logs';
