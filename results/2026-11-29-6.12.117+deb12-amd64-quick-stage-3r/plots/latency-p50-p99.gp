set terminal pngcairo size 1200,600 font "sans,11"
set output "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/latency-p50-p99.png"
set title "fio 4 KiB QD1 latency (median over rounds, bars: min–max)"
set style data histogram; set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1; set boxwidth 0.9; set grid ytics
set ylabel "µs (log scale)"; set key top left; set xtics nomirror
set logscale y
set yrange [*:*]
plot "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/latency-p50-p99.dat" using 2:3:4:xtic(1) lc rgb "#1b9e77" title "farswap", "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/latency-p50-p99.dat" using 5:6:7 lc rgb "#1f78b4" title "farswap --stage-kb 0"
