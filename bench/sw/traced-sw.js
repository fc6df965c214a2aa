// Bench only: the worker named by `?inner=` with trace.js loaded first (see trace.js). Registered at
// the origin's root, so its scope and the inner worker's relative imports are the usual ones.
importScripts('./bench-trace.js');
self.importScripts(new URL(self.location.href).searchParams.get('inner'));
self.benchTraceMark('worker script evaluated');
