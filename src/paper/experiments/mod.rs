//! The experiments of §IV, one file each, in the paper's order, and the pieces they
//! share (the cube-sliding sweeps of Tab. III/IV and Fig. 14/15 in [`sliding`]).

mod fig09;
mod fig10;
mod fig11;
mod fig12;
mod fig13;
mod fig14;
mod fig15;
mod fig16;
mod fig17;
mod fig18;
pub mod sliding;
mod tab3;
mod tab4;

use super::Experiment;

/// Every experiment, in the paper's order.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &fig09::Fig09,
        &fig10::Fig10,
        &fig11::Fig11,
        &fig12::Fig12,
        &fig13::Fig13,
        &tab3::Tab3,
        &fig14::Fig14,
        &tab4::Tab4,
        &fig15::Fig15,
        &fig16::Fig16,
        &fig17::Fig17,
        &fig18::Fig18,
    ]
}

/// Their ids.
pub fn ids() -> Vec<&'static str> {
    all().iter().map(|e| e.id()).collect()
}
