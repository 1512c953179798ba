#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# j. irqs: and net: on the guest's 4-queue virtio NIC: spread gives each queue vector one CPU,
# in queue order, over the spread order of 0-3 (one CPU of each core, then the second
# siblings: 0 2 1 3), its other vectors the whole set; rps: every rx queue; xps: spread the
# rps set divided among the tx queues.
. /usr/lib/affinityd-vm-tests/lib.sh
reset

[[ $NIC_MODE == tap ]] || skip "no multi-queue NIC: $NIC_REASON"
n=$(nic) || abort "no virtio-net interface"
pci=$(readlink -f "/sys/class/net/$n/device/..")
[[ -d $pci/msi_irqs ]] || abort "$n: no msi_irqs in $pci"
nq=$(ls -d /sys/class/net/$n/queues/rx-* | wc -l)
[[ $nq == 4 ]] || abort "$n: expected 4 rx queues, found $nq"

policy 50-j.yaml <<YAML
irqs:
  - name: vmt-nic
    match: { device: $n }
    cpus: "0-3"
    spread: true
net:
  - device: "$n"
    name: vmt-steer
    rps: "2-3"
    xps: spread
YAML
daemon_start || abort "systemctl start affinityd failed"

# The device's vectors with their names; queue vectors sorted by queue, then IRQ number.
irq_name() { awk -v irq="$1:" '$1 == irq { print $NF }' /proc/interrupts; }
queue_vectors=() other_vectors=()
for irq in $(ls "$pci/msi_irqs" | sort -n); do
        name=$(irq_name "$irq")
        if [[ $name =~ [-._]([0-9]+)$ ]]; then
                queue_vectors+=("${BASH_REMATCH[1]} $irq $name")
        else
                other_vectors+=("$irq $name")
        fi
done
mapfile -t queue_vectors < <(printf '%s\n' "${queue_vectors[@]}" | sort -n -k1,1 -k2,2)
expect_eq "queue vectors of $n" 8 "${#queue_vectors[@]}"
order=(0 2 1 3)
k=0
for v in "${queue_vectors[@]}"; do
        read -r q irq name <<<"$v"
        want=${order[k % 4]}
        got=$(cat /proc/irq/$irq/smp_affinity_list)
        expect_eq "IRQ $irq ($name, queue vector $k) smp_affinity_list" "$want" "$(cpulist_norm "$got")"
        k=$((k + 1))
done
for v in "${other_vectors[@]}"; do
        read -r irq name <<<"$v"
        expect_eq "IRQ $irq ($name, not a queue vector) smp_affinity_list" 0-3 "$(cpulist_norm "$(cat /proc/irq/$irq/smp_affinity_list)")"
done
for q in 0 1 2 3; do
        expect_eq "$n rx-$q rps_cpus" 2-3 "$(hexmask_to_list "$(cat /sys/class/net/$n/queues/rx-$q/rps_cpus)")"
done
xps=(2 3 2 3)
for q in 0 1 2 3; do
        expect_eq "$n tx-$q xps_cpus" "${xps[q]}" "$(hexmask_to_list "$(cat /sys/class/net/$n/queues/tx-$q/xps_cpus)")"
done
# affinityctl irqs reports the kernel's effective CPUs of each IRQ it placed.
irqs=$(affinityctl irqs --no-legend 2>&1)
for irq in $(for v in "${queue_vectors[@]}"; do echo "${v#* }"; done | cut -d' ' -f1) \
        $(for v in "${other_vectors[@]}"; do echo "${v%% *}"; done); do
        eff=$(cpulist_norm "$(cat /proc/irq/$irq/effective_affinity_list)")
        expect_eq "effective CPUs affinityctl irqs shows for IRQ $irq (the kernel's effective_affinity_list)" "$eff" \
                "$(awk -v i="$irq" '$1 == i { print $5 }' <<<"$irqs")"
        # Not a failure: x86 moves an MSI vector at its next interrupt (none come with the link
        # down); smp_affinity_list shows the pending mask meanwhile.
        asked=$(cpulist_norm "$(cat /proc/irq/$irq/smp_affinity_list)")
        [[ ",$(cpulist_norm "$asked")," == *",$eff,"* || $asked == *-* ]] ||
                say "note: IRQ $irq: effective $eff is not within the requested $asked (the move is pending)"
done
say "affinityctl irqs: $(grep -E 'vmt|virtio' <<<"$irqs")"
say "journal: $(journalctl -q -u affinityd -o cat | grep -i -E 'irq|effective' | tail -n 20)"
say "affinityctl net: $(affinityctl net --no-legend 2>&1)"
finish
