// Placeholder until the handler lands; keeps `cdk synth` bundling every entry of lib/routes.ts.
export const handler = async () => {
  throw new Error('not implemented');
};
