#!/bin/sh
# Run inside a test host (test/hosts/rsh HOST sh cgroup_mount.sh): mounts the machine's
# cgroup hierarchies on the host's own /sys/fs/cgroup, which `ip netns exec` left empty
# (it mounts a fresh sysfs for the namespace), so that a slurmd can start there
# (test/slurm/slurm_test.sh with SLURM_HOSTS). The machine's are read from PID 1's mount
# table: the unified hierarchy (cgroup v2) or the v1 controllers, each again by type.
set -e
if grep -q '^[^ ]* /sys/fs/cgroup/[^ ]* cgroup ' /proc/1/mounts; then
    mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup
    awk '$3 == "cgroup" { print $2, $4 }' /proc/1/mounts | while read -r dir opts; do
        name=${dir##*/}
        case $name in
        systemd) o=none,name=systemd ;;
        *) o=$(echo "$opts" | tr ',' '\n' | grep -Ev '^(rw|ro|nosuid|nodev|noexec|relatime)$' | paste -sd,) ;;
        esac
        mkdir -p "/sys/fs/cgroup/$name"
        mount -t cgroup -o "$o" cgroup "/sys/fs/cgroup/$name"
    done
else
    mount -t cgroup2 cgroup2 /sys/fs/cgroup
fi
