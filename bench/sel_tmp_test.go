package bench

import "orchsim/sim"

func init() {
	setSel = func(e string) {
		sim.NoCacheTmp = e == "nocache"
		sim.SelTmp = 0
	}
}
