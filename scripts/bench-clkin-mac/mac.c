// A replica in C of the CLKIN mixer kernels of hw/dsp/src/dsp/clkin/mac.rs (the Rust code is what runs;
// this times the two layouts alone): one 64 Ki-sample CS16 block fed through M-entry tables
// (M = 24975: 200 MS/s, the 10 ppm search), the way before (pieces of 4096 samples converted to CF32,
// AVX2 on duplicated tables) against the way now (AVX-512 on interleaved tables, CS16 read as it is), and
// AVX2 on interleaved tables (not in rxnode: a measurement for the AVX2 kernel).
// Thread CPU time, alternating rounds, best of each. Build and run:
//   gcc -O2 -o /tmp/mac scripts/bench-clkin-mac/mac.c && /tmp/mac 6
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#define M 24975
#define BLK 65536
static float dre1[2*M], dim1[2*M], dre2[2*M], dim2[2*M], in1[2*M], in2[2*M];
static int16_t cs[2*BLK]; static float piece[2*4096];
static double acc_sink;
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((target("avx2,fma"))) static void mac_avx2(const float*x,int n,int from){
  const float*r1=dre1+2*from,*i1=dim1+2*from,*r2=dre2+2*from,*i2=dim2+2*from;
  __m256 a0=_mm256_setzero_ps(),a1=a0,a2=a0,a3=a0,b0=a0,b1=a0,b2=a0,b3=a0; int k=0;
  for(;k+16<=n;k+=16){__m256 xa=_mm256_loadu_ps(x+k),xb=_mm256_loadu_ps(x+k+8);
    a0=_mm256_fmadd_ps(xa,_mm256_loadu_ps(r1+k),a0);a1=_mm256_fmadd_ps(xa,_mm256_loadu_ps(i1+k),a1);
    a2=_mm256_fmadd_ps(xa,_mm256_loadu_ps(r2+k),a2);a3=_mm256_fmadd_ps(xa,_mm256_loadu_ps(i2+k),a3);
    b0=_mm256_fmadd_ps(xb,_mm256_loadu_ps(r1+k+8),b0);b1=_mm256_fmadd_ps(xb,_mm256_loadu_ps(i1+k+8),b1);
    b2=_mm256_fmadd_ps(xb,_mm256_loadu_ps(r2+k+8),b2);b3=_mm256_fmadd_ps(xb,_mm256_loadu_ps(i2+k+8),b3);}
  float o[8];_mm256_storeu_ps(o,_mm256_add_ps(_mm256_add_ps(a0,b0),_mm256_add_ps(_mm256_add_ps(a1,b1),_mm256_add_ps(_mm256_add_ps(a2,b2),_mm256_add_ps(a3,b3)))));
  for(int j=0;j<8;j++)acc_sink+=o[j];
}
__attribute__((target("avx512f"))) static void conv(const int16_t*s,float*d,int nf){
  for(int k=0;k+16<=nf;k+=16)_mm512_storeu_ps(d+k,_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i*)(s+k)))),_mm512_set1_ps(1.f/32768)));
}
__attribute__((target("avx512f"))) static void mac_cs16_512(const int16_t*x,int n,int from){
  const float*p1=in1+2*from,*p2=in2+2*from;
  __m512 a0=_mm512_setzero_ps(),a1=a0,a2=a0,a3=a0,b0=a0,b1=a0,b2=a0,b3=a0; int k=0;
  for(;k+32<=n;k+=32){
    __m512 xa=_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i*)(x+k))));
    __m512 xb=_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i*)(x+k+16))));
    __m512 sa=_mm512_permute_ps(xa,0xB1),sb=_mm512_permute_ps(xb,0xB1);
    __m512 ta=_mm512_loadu_ps(p1+k),ua=_mm512_loadu_ps(p2+k),tb=_mm512_loadu_ps(p1+k+16),ub=_mm512_loadu_ps(p2+k+16);
    a0=_mm512_fmadd_ps(xa,ta,a0);a1=_mm512_fmadd_ps(sa,ta,a1);a2=_mm512_fmadd_ps(xa,ua,a2);a3=_mm512_fmadd_ps(sa,ua,a3);
    b0=_mm512_fmadd_ps(xb,tb,b0);b1=_mm512_fmadd_ps(sb,tb,b1);b2=_mm512_fmadd_ps(xb,ub,b2);b3=_mm512_fmadd_ps(sb,ub,b3);}
  acc_sink+=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0,b0),_mm512_add_ps(_mm512_add_ps(a1,b1),_mm512_add_ps(_mm512_add_ps(a2,b2),_mm512_add_ps(a3,b3)))));
}
__attribute__((target("avx2,fma"))) static void mac_avx2_inter(const float*x,int n,int from){
  const float*p1=in1+2*from,*p2=in2+2*from;
  __m256 a0=_mm256_setzero_ps(),a1=a0,a2=a0,a3=a0,b0=a0,b1=a0,b2=a0,b3=a0; int k=0;
  for(;k+16<=n;k+=16){__m256 xa=_mm256_loadu_ps(x+k),xb=_mm256_loadu_ps(x+k+8);
    __m256 sa=_mm256_permute_ps(xa,0xB1),sb=_mm256_permute_ps(xb,0xB1);
    __m256 ta=_mm256_loadu_ps(p1+k),ua=_mm256_loadu_ps(p2+k),tb=_mm256_loadu_ps(p1+k+8),ub=_mm256_loadu_ps(p2+k+8);
    a0=_mm256_fmadd_ps(xa,ta,a0);a1=_mm256_fmadd_ps(sa,ta,a1);a2=_mm256_fmadd_ps(xa,ua,a2);a3=_mm256_fmadd_ps(sa,ua,a3);
    b0=_mm256_fmadd_ps(xb,tb,b0);b1=_mm256_fmadd_ps(sb,tb,b1);b2=_mm256_fmadd_ps(xb,ub,b2);b3=_mm256_fmadd_ps(sb,ub,b3);}
  float o[8];_mm256_storeu_ps(o,_mm256_add_ps(_mm256_add_ps(a0,b0),_mm256_add_ps(_mm256_add_ps(a1,b1),_mm256_add_ps(_mm256_add_ps(a2,b2),_mm256_add_ps(a3,b3)))));
  for(int j=0;j<8;j++)acc_sink+=o[j];
}
static int pos=0;
// old: 4096-sample pieces converted, each summed up to the mixer block's ends
static void feed_old(void){for(int p=0;p<BLK;p+=4096){conv(cs+2*p,piece,2*4096);int at=0;while(at<4096){int take=M-pos;if(take>4096-at)take=4096-at;mac_avx2(piece+2*at,2*take,pos);pos=(pos+take)%M;at+=take;}}}
static void feed_ai(void){for(int p=0;p<BLK;p+=4096){conv(cs+2*p,piece,2*4096);int at=0;while(at<4096){int take=M-pos;if(take>4096-at)take=4096-at;mac_avx2_inter(piece+2*at,2*take,pos);pos=(pos+take)%M;at+=take;}}}
static void feed_new(void){int at=0;while(at<BLK){int take=M-pos;if(take>BLK-at)take=BLK-at;mac_cs16_512(cs+2*at,2*take,pos);pos=(pos+take)%M;at+=take;}}
int main(int argc,char**argv){
  int rounds=argc>1?atoi(argv[1]):8;
  for(int i=0;i<2*M;i++){dre1[i]=dim1[i]=dre2[i]=dim2[i]=in1[i]=in2[i]=1e-9f*(i%97);}
  for(int i=0;i<2*BLK;i++)cs[i]=(int16_t)(rand()%2000-1000);
  double best[3]={1e9,1e9,1e9};
  for(int r=0;r<rounds;r++)for(int v=0;v<3;v++){
    // a fresh block each time would come from the other core; here it stays in L2 for both.
    double t0=now();for(int i=0;i<200;i++){if(v==0)feed_old();else if(v==1)feed_new();else feed_ai();}double t=(now()-t0)/(200.0*BLK);
    if(t<best[v])best[v]=t; printf("round %d %s %.3f ns/sample\n",r,v==0?"old":v==1?"new":"avx2-inter",t*1e9);}
  printf("best: old (convert 4096 + AVX2 duplicated tables) %.3f ns/sample = %.0f MS/s; new (AVX-512, CS16, interleaved) %.3f ns/sample = %.0f MS/s; new/old time %.2f\n",best[0]*1e9,1e-6/best[0],best[1]*1e9,1e-6/best[1],best[1]/best[0]);
  printf("avx2 interleaved (convert 4096 + AVX2 on interleaved tables) %.3f ns/sample, /old %.2f\n",best[2]*1e9,best[2]/best[0]);
  return acc_sink==12345.0;
}
