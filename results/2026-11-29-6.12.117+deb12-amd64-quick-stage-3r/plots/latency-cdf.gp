set terminal pngcairo size 1400,1000 font "sans,11"
set output "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/latency-cdf.png"
set multiplot layout 2,2 title "fio 4 KiB direct I/O: latency distribution (all rounds merged; CDF)"
set logscale x; set grid; set key bottom right; set yrange [0:1]
set xlabel "latency (µs, log scale)"; set ylabel "fraction of I/Os ≤ x"
set title "4K random read, QD1"
plot "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randread-qd1-farswap.dat" using 1:2 with lines lw 2 lc rgb "#1b9e77" title "farswap", "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randread-qd1-farswap-nostage.dat" using 1:2 with lines lw 2 lc rgb "#1f78b4" title "farswap --stage-kb 0"
set title "4K random write, QD1"
plot "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randwrite-qd1-farswap.dat" using 1:2 with lines lw 2 lc rgb "#1b9e77" title "farswap", "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randwrite-qd1-farswap-nostage.dat" using 1:2 with lines lw 2 lc rgb "#1f78b4" title "farswap --stage-kb 0"
set title "4K random read, QD16"
plot "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randread-qd16-farswap.dat" using 1:2 with lines lw 2 lc rgb "#1b9e77" title "farswap", "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randread-qd16-farswap-nostage.dat" using 1:2 with lines lw 2 lc rgb "#1f78b4" title "farswap --stage-kb 0"
set title "4K random write, QD16"
plot "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randwrite-qd16-farswap.dat" using 1:2 with lines lw 2 lc rgb "#1b9e77" title "farswap", "results/tmp/2026-11-29-6.12.117+deb12-amd64-quick/plots/cdf-randwrite-qd16-farswap-nostage.dat" using 1:2 with lines lw 2 lc rgb "#1f78b4" title "farswap --stage-kb 0"
unset multiplot
