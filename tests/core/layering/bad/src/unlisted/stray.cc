// Planted: a module folder missing from MODULES.
int Stray() { return 0; }
