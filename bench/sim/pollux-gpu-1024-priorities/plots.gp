# gnuplot script written by rackfit-bench sim; run from this directory: gnuplot plots.gp
set datafile separator ','
set grid
set key outside right top

set terminal pngcairo size 900,480
set output 'util.png'
set title "GPU utilisation over time (solid: allocated, dashed: effective)"
set xlabel 'hours'
set ylabel 'fraction of GPUs'
unset logscale
set style data lines
set yrange [0:*]
plot 'util.csv' using 1:2 lw 2 lc 1 title 'kube', 'util.csv' using 1:3 lw 2 dt 2 lc 1 notitle, 'util.csv' using 1:4 lw 2 lc 2 title 'kueue', 'util.csv' using 1:5 lw 2 dt 2 lc 2 notitle, 'util.csv' using 1:6 lw 2 lc 3 title 'greedy', 'util.csv' using 1:7 lw 2 dt 2 lc 3 notitle, 'util.csv' using 1:8 lw 2 lc 4 title 'ilp', 'util.csv' using 1:9 lw 2 dt 2 lc 4 notitle, 'util.csv' using 1:10 lw 2 lc 5 title 'auto', 'util.csv' using 1:11 lw 2 dt 2 lc 5 notitle

set terminal svg dynamic size 900,480
set output 'util.svg'
set title "GPU utilisation over time (solid: allocated, dashed: effective)"
set xlabel 'hours'
set ylabel 'fraction of GPUs'
unset logscale
set style data lines
set yrange [0:*]
plot 'util.csv' using 1:2 lw 2 lc 1 title 'kube', 'util.csv' using 1:3 lw 2 dt 2 lc 1 notitle, 'util.csv' using 1:4 lw 2 lc 2 title 'kueue', 'util.csv' using 1:5 lw 2 dt 2 lc 2 notitle, 'util.csv' using 1:6 lw 2 lc 3 title 'greedy', 'util.csv' using 1:7 lw 2 dt 2 lc 3 notitle, 'util.csv' using 1:8 lw 2 lc 4 title 'ilp', 'util.csv' using 1:9 lw 2 dt 2 lc 4 notitle, 'util.csv' using 1:10 lw 2 lc 5 title 'auto', 'util.csv' using 1:11 lw 2 dt 2 lc 5 notitle

set terminal pngcairo size 900,480
set output 'jct_cdf.png'
set title "Job completion time CDF (solid: comm on, dashed: comm off)"
set xlabel 'JCT (hours, log)'
set ylabel 'fraction of jobs'
unset logscale
set logscale x
set style data lines
set yrange [0:*]
plot 'jct_cdf.csv' using 2:1 lw 2 lc 1 title 'kube', 'jct_cdf.csv' using 3:1 lw 2 lc 2 title 'kueue', 'jct_cdf.csv' using 4:1 lw 2 lc 3 title 'greedy', 'jct_cdf.csv' using 5:1 lw 2 lc 4 title 'ilp', 'jct_cdf.csv' using 6:1 lw 2 lc 5 title 'auto', 'jct_cdf.csv' using 7:1 lw 2 lc 1 dt 2 notitle, 'jct_cdf.csv' using 8:1 lw 2 lc 2 dt 2 notitle, 'jct_cdf.csv' using 9:1 lw 2 lc 3 dt 2 notitle, 'jct_cdf.csv' using 10:1 lw 2 lc 4 dt 2 notitle, 'jct_cdf.csv' using 11:1 lw 2 lc 5 dt 2 notitle

set terminal svg dynamic size 900,480
set output 'jct_cdf.svg'
set title "Job completion time CDF (solid: comm on, dashed: comm off)"
set xlabel 'JCT (hours, log)'
set ylabel 'fraction of jobs'
unset logscale
set logscale x
set style data lines
set yrange [0:*]
plot 'jct_cdf.csv' using 2:1 lw 2 lc 1 title 'kube', 'jct_cdf.csv' using 3:1 lw 2 lc 2 title 'kueue', 'jct_cdf.csv' using 4:1 lw 2 lc 3 title 'greedy', 'jct_cdf.csv' using 5:1 lw 2 lc 4 title 'ilp', 'jct_cdf.csv' using 6:1 lw 2 lc 5 title 'auto', 'jct_cdf.csv' using 7:1 lw 2 lc 1 dt 2 notitle, 'jct_cdf.csv' using 8:1 lw 2 lc 2 dt 2 notitle, 'jct_cdf.csv' using 9:1 lw 2 lc 3 dt 2 notitle, 'jct_cdf.csv' using 10:1 lw 2 lc 4 dt 2 notitle, 'jct_cdf.csv' using 11:1 lw 2 lc 5 dt 2 notitle

set terminal pngcairo size 900,480
set output 'wait_cdf.png'
set title "Queueing delay CDF (solid: comm on, dashed: comm off)"
set xlabel 'queueing delay (hours)'
set ylabel 'fraction of jobs'
unset logscale
set style data lines
set yrange [0:*]
plot 'wait_cdf.csv' using 2:1 lw 2 lc 1 title 'kube', 'wait_cdf.csv' using 3:1 lw 2 lc 2 title 'kueue', 'wait_cdf.csv' using 4:1 lw 2 lc 3 title 'greedy', 'wait_cdf.csv' using 5:1 lw 2 lc 4 title 'ilp', 'wait_cdf.csv' using 6:1 lw 2 lc 5 title 'auto', 'wait_cdf.csv' using 7:1 lw 2 lc 1 dt 2 notitle, 'wait_cdf.csv' using 8:1 lw 2 lc 2 dt 2 notitle, 'wait_cdf.csv' using 9:1 lw 2 lc 3 dt 2 notitle, 'wait_cdf.csv' using 10:1 lw 2 lc 4 dt 2 notitle, 'wait_cdf.csv' using 11:1 lw 2 lc 5 dt 2 notitle

set terminal svg dynamic size 900,480
set output 'wait_cdf.svg'
set title "Queueing delay CDF (solid: comm on, dashed: comm off)"
set xlabel 'queueing delay (hours)'
set ylabel 'fraction of jobs'
unset logscale
set style data lines
set yrange [0:*]
plot 'wait_cdf.csv' using 2:1 lw 2 lc 1 title 'kube', 'wait_cdf.csv' using 3:1 lw 2 lc 2 title 'kueue', 'wait_cdf.csv' using 4:1 lw 2 lc 3 title 'greedy', 'wait_cdf.csv' using 5:1 lw 2 lc 4 title 'ilp', 'wait_cdf.csv' using 6:1 lw 2 lc 5 title 'auto', 'wait_cdf.csv' using 7:1 lw 2 lc 1 dt 2 notitle, 'wait_cdf.csv' using 8:1 lw 2 lc 2 dt 2 notitle, 'wait_cdf.csv' using 9:1 lw 2 lc 3 dt 2 notitle, 'wait_cdf.csv' using 10:1 lw 2 lc 4 dt 2 notitle, 'wait_cdf.csv' using 11:1 lw 2 lc 5 dt 2 notitle

set terminal pngcairo size 900,480
set output 'spread.png'
set title "Racks spanned per job, by job size"
set xlabel 'job size (GPUs)'
set ylabel 'mean racks per job'
unset logscale
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8
set yrange [0:*]
plot 'spread.csv' using 2:xtic(1) lc 1 title 'kube', 'spread.csv' using 4:xtic(1) lc 2 title 'kueue', 'spread.csv' using 6:xtic(1) lc 3 title 'greedy', 'spread.csv' using 8:xtic(1) lc 4 title 'ilp', 'spread.csv' using 10:xtic(1) lc 5 title 'auto'

set terminal svg dynamic size 900,480
set output 'spread.svg'
set title "Racks spanned per job, by job size"
set xlabel 'job size (GPUs)'
set ylabel 'mean racks per job'
unset logscale
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8
set yrange [0:*]
plot 'spread.csv' using 2:xtic(1) lc 1 title 'kube', 'spread.csv' using 4:xtic(1) lc 2 title 'kueue', 'spread.csv' using 6:xtic(1) lc 3 title 'greedy', 'spread.csv' using 8:xtic(1) lc 4 title 'ilp', 'spread.csv' using 10:xtic(1) lc 5 title 'auto'
