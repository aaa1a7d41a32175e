set terminal pngcairo size 1200,600 font "sans,11"
set output "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/throughput.png"
set title "fio 4 KiB direct I/O throughput (median over rounds, bars: min–max)"
set style data histogram; set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1; set boxwidth 0.9; set grid ytics
set ylabel "IOPS (log scale)"; set key top left; set xtics nomirror
set logscale y
set yrange [*:*]
plot "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 2:3:4:xtic(1) lc rgb "#1b9e77" title "farswap", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 5:6:7 lc rgb "#e41a1c" title "farswap at MTU 9000", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 8:9:10 lc rgb "#377eb8" title "farswap write_inflight_kb=0", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 11:12:13 lc rgb "#984ea3" title "farswap write_inflight_kb=128", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 14:15:16 lc rgb "#ff7f00" title "farswap write_inflight_kb=2048", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 17:18:19 lc rgb "#d95f02" title "NVMe-oF/RDMA", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 20:21:22 lc rgb "#a65628" title "NVMe-oF/RDMA at MTU 9000", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 23:24:25 lc rgb "#7570b3" title "NBD/TCP", "results/tmp/2026-11-24-6.12.117+deb12-amd64-quick/plots/throughput.dat" using 26:27:28 lc rgb "#a65628" title "NBD/TCP at MTU 9000"
