export * from './poller.js';
export * from './schedule.js';
export * from './snapshot.js';
