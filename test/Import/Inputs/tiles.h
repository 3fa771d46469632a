// A header for preprocessor.co.
#ifndef TILES_H
#define TILES_H
#define TILE 64
#define HALF(x) ((x) / 2)
#endif
