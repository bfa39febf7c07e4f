// jest's globalSetup (jest.config.cjs): loaded outside jest's resolver, so the import names no extension.
export { startRun as default } from './run-logs';
