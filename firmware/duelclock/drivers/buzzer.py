# A passive piezo buzzer on a PWM pin: beep(count) sounds `count` short tones. It blocks for
# count * (on_ms + off_ms) - off_ms: 300 ms for 3 beeps with the defaults, so the app calls it
# between frames (key levels are read as states, so a press held across it is not lost).
import time


class Buzzer:
    def __init__(self, pwm, freq_hz=2700, on_ms=60, off_ms=60):
        self.pwm = pwm                  # machine.PWM, ready-made
        self.freq_hz = freq_hz          # near a small piezo's loudest point
        self.on_ms = on_ms
        self.off_ms = off_ms
        pwm.duty_u16(0)

    def beep(self, count):
        for i in range(count):
            if i:
                time.sleep(self.off_ms / 1000)
            self.pwm.freq(self.freq_hz)
            self.pwm.duty_u16(32768)    # a square wave: loudest for a passive piezo
            time.sleep(self.on_ms / 1000)
            self.pwm.duty_u16(0)
