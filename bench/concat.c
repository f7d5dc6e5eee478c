/*
** concat.c: how long parBatchConcat takes to join the pieces of a parallel
** read whose TEXT column has many values in common (bench Q3's k_text).
**
**   make bench-concat                  512 pieces of 20000 rows, 10000 texts
**   ./build/bench_concat NPIECE NROW NDISTINCT REPS
**
** Each piece is one TEXT column of NROW rows drawn at random from
** NDISTINCT values ("name0" ... , as bench.py's k_text), with its own
** dictionary (about 8,600 entries a piece at the defaults), built the way
** extraction builds it.  The pieces are joined REPS times at 1 and 2
** threads (and at every core when there are more), keeping the pieces
** (a reference held), and the least and median times are printed.  Most
** of the time is the merge of the pieces' dictionaries; the rest is
** mapping every row's code (memory work, in parallel).  Not a test: the
** numbers go in bench/results.md or a commit message.
*/
#include "batch.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rngNext(uint64_t *s){
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* One piece: nRow rows of random values below nDistinct. */
static ParBatch *makePiece(uint64_t *pRng, int nRow, int nDistinct){
  ParBatch *pB = sqlite3_malloc(sizeof(*pB));
  ParColumn *pCol;
  int r;
  if( pB==0 ) return 0;
  memset(pB, 0, sizeof(*pB));
  pB->nRef = 2;                  /* the bench's and concat's: concat keeps it */
  pB->nCol = 1;
  pB->nRow = pB->nRowAlloc = nRow;
  pB->aCol = pCol = sqlite3_malloc(sizeof(ParColumn));
  if( pCol==0 ) return 0;
  memset(pCol, 0, sizeof(*pCol));
  pCol->zName = sqlite3_mprintf("k_text");
  pCol->eStore = PAR_COL_TEXT;
  pCol->aCode = sqlite3_malloc64((sqlite3_uint64)nRow*4);
  pCol->pDict = sqlite3_malloc(sizeof(ParDict));
  if( pCol->zName==0 || pCol->aCode==0 || pCol->pDict==0 ) return 0;
  memset(pCol->pDict, 0, sizeof(ParDict));
  for(r=0; r<nRow; r++){
    char z[32];
    int n = snprintf(z, sizeof(z), "name%d", (int)(rngNext(pRng) % (uint64_t)nDistinct));
    if( parDictAdd(pB, pCol->pDict, (const unsigned char*)z, n, SQLITE_TEXT,
                   &pCol->aCode[r]) ) return 0;
  }
  return pB;
}

static int cmpDouble(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x<y ? -1 : x>y;
}

int main(int argc, char **argv){
  int nPiece = argc>1 ? atoi(argv[1]) : 512;
  int nRow = argc>2 ? atoi(argv[2]) : 20000;
  int nDistinct = argc>3 ? atoi(argv[3]) : 10000;
  int nRep = argc>4 ? atoi(argv[4]) : 7;
  int aThread[3] = { 1, 2, omp_get_num_procs() };
  int nThreadCase = aThread[2]>2 ? 3 : 2;
  ParBatch **apPiece;
  double *aTime;
  uint64_t rng = 42;
  sqlite3_int64 nEntry = 0;
  int i, t, rep;

  if( nPiece<1 || nRow<0 || nDistinct<1 || nRep<1 ){
    fprintf(stderr, "usage: %s NPIECE NROW NDISTINCT REPS\n", argv[0]);
    return 2;
  }
  apPiece = calloc((size_t)nPiece, sizeof(*apPiece));
  aTime = calloc((size_t)nRep, sizeof(double));
  for(i=0; i<nPiece; i++){
    apPiece[i] = makePiece(&rng, nRow, nDistinct);
    if( apPiece[i]==0 ){ fprintf(stderr, "out of memory\n"); return 1; }
    nEntry += apPiece[i]->aCol[0].pDict->nEntry;
  }
  printf("concat: %d pieces of %d rows, %d distinct texts, %.0f entries a piece\n",
         nPiece, nRow, nDistinct, (double)nEntry/nPiece);
  for(t=0; t<nThreadCase; t++){
    uint32_t nOut = 0;
    for(rep=0; rep<nRep; rep++){
      ParBatch *pOut = 0;
      char *zErr = 0;
      double t0 = omp_get_wtime();
      int rc = parBatchConcat(apPiece, nPiece, 0, aThread[t], 0, &pOut, &zErr);
      aTime[rep] = omp_get_wtime() - t0;
      if( rc ){ fprintf(stderr, "concat: %s\n", zErr ? zErr : "?"); return 1; }
      nOut = pOut->aCol[0].pDict ? pOut->aCol[0].pDict->nEntry : 0;
      parBatchFree(pOut);
    }
    qsort(aTime, (size_t)nRep, sizeof(double), cmpDouble);
    printf("  %2d threads: least %7.1f ms, median %7.1f ms (%u entries merged)\n",
           aThread[t], aTime[0]*1e3, aTime[nRep/2]*1e3, nOut);
  }
  for(i=0; i<nPiece; i++){
    parBatchFree(apPiece[i]);
    parBatchFree(apPiece[i]);
  }
  free(apPiece);
  free(aTime);
  return 0;
}
