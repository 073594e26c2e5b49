package bench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// readResidentPages lists the resident pages of the mappings of a running
// process's executable, from /proc/PID/maps and /proc/PID/pagemap (whose
// present bit needs no privilege; the frame numbers, unused here, do).
func readResidentPages(pid int) (*Resident, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	exe, err := os.Readlink(dir + "/exe")
	if err != nil {
		return nil, fmt.Errorf("reading the executable of %d: %w", pid, err)
	}
	maps, err := os.Open(dir + "/maps")
	if err != nil {
		return nil, fmt.Errorf("reading the mappings: %w", err)
	}
	defer maps.Close()
	pm, err := os.Open(dir + "/pagemap")
	if err != nil {
		return nil, fmt.Errorf("reading the page map: %w", err)
	}
	defer pm.Close()
	r := &Resident{Exe: exe}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != exe {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("reading the mapping %q", f[0])
		}
		buf := make([]byte, (end-start)/PageSize*8)
		if _, err := pm.ReadAt(buf, int64(start/PageSize*8)); err != nil {
			return nil, fmt.Errorf("reading the page map of %s: %w", f[0], err)
		}
		for i := range (end - start) / PageSize {
			if binary.LittleEndian.Uint64(buf[i*8:])&(1<<63) != 0 {
				r.Pages = append(r.Pages, start+i*PageSize)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the mappings: %w", err)
	}
	return r, nil
}
