/** Progress sink for long steps; the CLI prints to stderr, tests may collect or drop it. */
export type Progress = (message: string) => void;

export const stderrProgress: Progress = (message) => {
  process.stderr.write(`harness: ${message}\n`);
};

export const silentProgress: Progress = () => {};
