/*
** replay.c: run the fuzz target (fuzz_sql.c) over saved inputs, without
** libFuzzer, so that make test replays the corpus with gcc's sanitizers.
**
**   build/asan/fuzz_replay tests/fuzz/corpus tests/fuzz/crashes
**   build/asan/fuzz_replay tests/fuzz/crashes/crash-1234abcd   # one file
**
** Every file under the directories named (and every file named) is one
** input; files called KNOWN or README* are not.  tests/fuzz/crashes/KNOWN
** lists, one file name a line ('#' starts a comment), crashers whose bug
** is not fixed yet: they are skipped and named in the summary.
**
** How it works.  Each input runs in a child process of its own (fork,
** before anything else starts threads or opens SQLite), which makes the
** database, runs the input and exits; a child that dies by a signal or
** exits non-zero (a sanitizer report) is one failure, named with its file
** and with the child's own report above it.  The last line is
** "fuzz_replay: N passed, N failed" (tests/run.sh adds these up).
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *pArgc, char ***pArgv);
int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData);

typedef struct NameList {
  char **az;
  int n, nAlloc;
} NameList;

/* The inputs, the KNOWN names and the skipped files (static: a child's
** leak check at exit sees them in use, not leaked). */
static NameList files, known, skipped;

static void nameAdd(NameList *p, const char *z){
  if( p->n==p->nAlloc ){
    p->nAlloc = p->nAlloc ? 2*p->nAlloc : 64;
    p->az = realloc(p->az, p->nAlloc * sizeof(char*));
    if( p->az==0 ){ perror("fuzz_replay"); exit(2); }
  }
  p->az[p->n] = strdup(z);
  if( p->az[p->n]==0 ){ perror("fuzz_replay"); exit(2); }
  p->n++;
}

static int nameCmp(const void *a, const void *b){
  return strcmp(*(char*const*)a, *(char*const*)b);
}

static const char *baseName(const char *zPath){
  const char *z = strrchr(zPath, '/');
  return z ? z + 1 : zPath;
}

static int isInputName(const char *zName){
  return zName[0]!='.' && strcmp(zName, "KNOWN")!=0 && strncmp(zName, "README", 6)!=0;
}

/* The names listed in zDir/KNOWN, if there is one. */
static void readKnown(const char *zDir, NameList *pKnown){
  char zPath[4096], zLine[1024];
  FILE *f;
  snprintf(zPath, sizeof(zPath), "%s/KNOWN", zDir);
  f = fopen(zPath, "r");
  if( f==0 ) return;
  while( fgets(zLine, sizeof(zLine), f) ){
    char *z = zLine, *zEnd;
    zEnd = strchr(z, '#');
    if( zEnd ) *zEnd = 0;
    while( *z==' ' || *z=='\t' ) z++;
    zEnd = z + strlen(z);
    while( zEnd>z && (zEnd[-1]=='\n' || zEnd[-1]==' ' || zEnd[-1]=='\t' || zEnd[-1]=='\r') ) zEnd--;
    *zEnd = 0;
    if( *z ) nameAdd(pKnown, z);
  }
  fclose(f);
}

static int isKnown(const NameList *pKnown, const char *zPath){
  int i;
  for(i=0; i<pKnown->n; i++){
    if( strcmp(pKnown->az[i], baseName(zPath))==0 ) return 1;
  }
  return 0;
}

/* Run one input in a child; 0 if it passed. */
static int replayOne(const char *zPath){
  pid_t pid;
  int status;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if( pid<0 ){ perror("fuzz_replay: fork"); return 1; }
  if( pid==0 ){
    FILE *f = fopen(zPath, "rb");
    uint8_t *a;
    long n;
    if( f==0 || fseek(f, 0, SEEK_END)!=0 || (n = ftell(f))<0 || fseek(f, 0, SEEK_SET)!=0 ){
      perror(zPath);
      _exit(3);
    }
    a = malloc(n ? n : 1);
    if( a==0 || fread(a, 1, n, f)!=(size_t)n ){ perror(zPath); _exit(3); }
    fclose(f);
    LLVMFuzzerInitialize(0, 0);
    LLVMFuzzerTestOneInput(a, (size_t)n);
    free(a);
    exit(0);   /* atexit: closes the database, removes its files */
  }
  if( waitpid(pid, &status, 0)<0 ){ perror("fuzz_replay: waitpid"); return 1; }
  if( WIFEXITED(status) && WEXITSTATUS(status)==0 ) return 0;
  if( WIFSIGNALED(status) ){
    printf("FAILED %s: killed by signal %d\n", zPath, WTERMSIG(status));
  }else{
    printf("FAILED %s: exit status %d\n", zPath, WEXITSTATUS(status));
  }
  return 1;
}

int main(int argc, char **argv){
  int i, nPass = 0, nFail = 0;
  if( argc<2 ){
    fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
    return 2;
  }
  for(i=1; i<argc; i++){
    struct stat st;
    if( stat(argv[i], &st)!=0 ){ perror(argv[i]); return 2; }
    if( S_ISDIR(st.st_mode) ){
      DIR *d = opendir(argv[i]);
      struct dirent *pEnt;
      char zPath[4096];
      if( d==0 ){ perror(argv[i]); return 2; }
      readKnown(argv[i], &known);
      while( (pEnt = readdir(d))!=0 ){
        if( !isInputName(pEnt->d_name) ) continue;
        snprintf(zPath, sizeof(zPath), "%s/%s", argv[i], pEnt->d_name);
        if( stat(zPath, &st)==0 && S_ISREG(st.st_mode) ) nameAdd(&files, zPath);
      }
      closedir(d);
    }else{
      nameAdd(&files, argv[i]);
    }
  }
  qsort(files.az, files.n, sizeof(char*), nameCmp);
  for(i=0; i<files.n; i++){
    if( isKnown(&known, files.az[i]) ){
      nameAdd(&skipped, files.az[i]);
    }else if( replayOne(files.az[i]) ){
      nFail++;
    }else{
      nPass++;
    }
  }
  for(i=0; i<skipped.n; i++){
    printf("skipped (listed in KNOWN, bug not fixed yet): %s\n", skipped.az[i]);
  }
  printf("fuzz_replay: %d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
