export * from './cloudmap-port.js';
